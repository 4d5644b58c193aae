/** `page`/`pageSize` in, `pagination` out — the same for every list operation. */
import type { Pagination } from './envelope.js';

export interface PageRequest {
  page: number;
  pageSize: number;
  offset: number;
}

export function pageRequest(query: { page?: number; pageSize?: number } | undefined): PageRequest {
  const page = query?.page ?? 1;
  const pageSize = query?.pageSize ?? 20;
  return { page, pageSize, offset: (page - 1) * pageSize };
}

export function paginationOf(request: PageRequest, totalItems: number): Pagination {
  const totalPages = Math.ceil(totalItems / request.pageSize);
  return { page: request.page, pageSize: request.pageSize, totalItems, totalPages, hasMore: request.page < totalPages };
}
