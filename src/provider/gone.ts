/** What the resources do when the service no longer has an object. */
import { ApiError } from "../client/errors";

/**
 * The value of `request`, or `undefined` when the service answers 404: the object is gone (deleted
 * elsewhere, or not visible to this key). Any other error is thrown.
 */
export async function unlessGone<T>(request: Promise<T>): Promise<T | undefined> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}
