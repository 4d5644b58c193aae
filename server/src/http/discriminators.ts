/**
 * Discriminators for the validator. A `oneOf` whose branches each require one property with a constant value of
 * its own (a question's `type`) is validated by the branch that value names, so a client hears only that branch's
 * problems: without it Ajv reports every branch's complaints (a one-row matrix gave 72 problems, most about other
 * question types). The document itself declares none: openapi-typescript would then name each branch's value
 * after its schema (`"NpsQuestionInput"`) in the generated types, and Ajv's `discriminator` refuses the
 * `mapping` that would fix that. So they are added to the validator's copy only, wherever the shape holds.
 */
type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The single constant a branch's property is held to (`const`, or an `enum` of one). */
function constantOf(schema: unknown): unknown {
  if (!isObject(schema)) return undefined;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length === 1) return schema.enum[0];
  return undefined;
}

/** The property that tells the branches apart, if there is one: required by each, a distinct constant in each. */
function tagOf(branches: Schema[]): string | undefined {
  const first = branches[0];
  const candidates = Array.isArray(first?.required) ? (first.required as string[]) : [];
  return candidates.find((name) => {
    const values = branches.map((branch) =>
      Array.isArray(branch.required) && branch.required.includes(name)
        ? constantOf((branch.properties as Schema | undefined)?.[name])
        : undefined,
    );
    return values.every((value) => typeof value === 'string') && new Set(values).size === values.length;
  });
}

/** `document` with `discriminator: { propertyName }` on every `oneOf` that has a tag; changed in place. */
export function withDiscriminators<T extends object>(document: T): T {
  const schemas = ((document as Schema).components as Schema | undefined)?.schemas as Schema | undefined;
  const resolve = (schema: unknown): Schema | undefined => {
    if (!isObject(schema)) return undefined;
    const ref = typeof schema.$ref === 'string' ? /^#\/components\/schemas\/(.+)$/.exec(schema.$ref) : null;
    return ref ? resolve(schemas?.[ref[1]!]) : schema;
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!isObject(node)) return;
    if (Array.isArray(node.oneOf) && !node.discriminator && node.oneOf.length > 1) {
      const branches = node.oneOf.map(resolve);
      if (branches.every(isObject)) {
        const tag = tagOf(branches as Schema[]);
        // Ajv's discriminator checks objects only and lets any other value through its oneOf: every branch is an
        // object, so the oneOf says so itself (a string where a question belongs stays a 400).
        if (tag && branches.every((branch) => (branch as Schema).type === 'object')) {
          node.discriminator = { propertyName: tag };
          node.type ??= 'object';
        }
      }
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(document);
  return document;
}
