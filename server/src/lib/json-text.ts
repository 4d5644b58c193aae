/**
 * JSON text of a value of type `T`, built elsewhere (by PostgreSQL, for a page of a list) and sent as it is: the
 * type says what it holds, so a handler can return it where the contract wants a `T`.
 */
export type JsonText<T> = string & { readonly jsonOf?: T };
