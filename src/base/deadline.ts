// The one timeout helper of baton's Redis callers (the hook's raw client, ioredis connections, the
// local Redis probe). Light: the hook loads it on every event.

/** `promise`, or a rejection with `message` once `ms` have passed; the timer never outlives it. */
export function withDeadline<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
