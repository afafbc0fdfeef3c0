/** Cursor pages (`{data, has_more, next_cursor}`) and their query parameters. */
import { z } from "zod";

/** The cursor envelope of a paged list. */
export function Envelope<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item),
    has_more: z.boolean(),
    next_cursor: z.string().nullable(),
  });
}
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Smallest, largest and default `limit`. */
export const PAGE_LIMIT = { min: 1, max: 100, default: 20 } as const;
