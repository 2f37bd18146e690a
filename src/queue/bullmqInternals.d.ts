// Types for the files of BullMQ's CommonJS build that addJob.ts and client.ts import (BullMQ ships
// declarations for its ESM build only).
declare module 'bullmq/dist/cjs/scripts/addStandardJob-9.js' {
  export const addStandardJob: { name: string; content: string; keys: number };
}
declare module 'bullmq/dist/cjs/version.js' {
  export const version: string;
}
declare module 'bullmq/dist/cjs/scripts/removeJob-2.js' {
  export const removeJob: { name: string; content: string; keys: number };
}
