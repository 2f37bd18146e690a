// POSIX shell quoting, for the commands baton prints (next steps, installed hook commands).

/** Single-quotes an argument only where a POSIX shell needs it, so the common case stays readable. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
