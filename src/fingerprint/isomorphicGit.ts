// What objects.ts loads lazily from isomorphic-git (`await import('./isomorphicGit.ts')`: ~50 ms to
// load, needed only for packed objects). Not `import('isomorphic-git')`: the package is CommonJS, and
// in the bundle a lazily imported CommonJS module has only a `default` export, so named exports read
// from it are undefined (scripts/build.mjs refuses such an import). Imported statically here, the
// bundler resolves the names.
export { readObject } from 'isomorphic-git';
