// Types for the two files of BullMQ's CommonJS build that addJob.ts imports (BullMQ ships
// declarations for its ESM build only).
declare module 'bullmq/dist/cjs/scripts/addStandardJob-9.js' {
  export const addStandardJob: { name: string; content: string; keys: number };
}
declare module 'bullmq/dist/cjs/version.js' {
  export const version: string;
}
