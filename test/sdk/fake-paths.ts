/**
 * A small hand-written `paths` type for the fake server, so these tests do not depend on the state of the
 * real document (written by others in parallel). It has the same shape openapi-typescript generates.
 */
type Envelope<T> = { data: T; meta: { requestId: string; timestamp: string; apiVersion: 'v1' } };
type Json<T> = { headers: Record<string, unknown>; content: { 'application/json': T } };
type ErrorBody = { error: { code: string; message: string; status: number; details?: unknown[] }; meta: unknown };

export interface Thing {
  id: string;
  name: string;
}

export interface fakePaths {
  '/things': {
    parameters: { query?: never; header?: never; path?: never; cookie?: never };
    get: {
      parameters: {
        query?: { page?: number; pageSize?: number; q?: string };
        header?: never;
        path?: never;
        cookie?: never;
      };
      requestBody?: never;
      responses: {
        200: Json<
          Envelope<Thing[]> & {
            pagination: { page: number; pageSize: number; totalItems: number; totalPages: number; hasMore: boolean };
          }
        >;
        400: Json<ErrorBody>;
        429: Json<ErrorBody>;
      };
    };
    post: {
      parameters: { query?: never; header?: { 'Idempotency-Key'?: string }; path?: never; cookie?: never };
      requestBody: { content: { 'application/json': { name: string } } };
      responses: { 201: Json<Envelope<Thing>>; 400: Json<ErrorBody>; 409: Json<ErrorBody> };
    };
    patch: {
      parameters: { query?: never; header?: never; path?: never; cookie?: never };
      requestBody: { content: { 'application/json': { name: string } } };
      responses: { 200: Json<Envelope<Thing>>; 503: Json<ErrorBody> };
    };
  };
  '/things/{id}': {
    parameters: { query?: never; header?: never; path: { id: string }; cookie?: never };
    get: {
      parameters: { query?: never; header?: never; path: { id: string }; cookie?: never };
      requestBody?: never;
      responses: { 200: Json<Envelope<Thing>>; 404: Json<ErrorBody>; 500: Json<ErrorBody>; 503: Json<ErrorBody> };
    };
  };
}
