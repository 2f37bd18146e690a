// isomorphic-git's object reader, for the one thing baton does not read itself: deltified objects in
// pack files (objects.ts tries loose and whole packed objects first). A module of its own so that it
// is loaded only when such an object is needed (~50 ms to load), and so that the lean
// `baton fingerprint` bundle can load it lazily from the main bundle (scripts/build.mjs).
// Not `import('isomorphic-git')`: the package is CommonJS, and in the bundle a lazily imported
// CommonJS module has only a `default` export, so named exports read from it would be undefined
// (scripts/build.mjs refuses such an import). Imported statically here, the bundler resolves the names.
export { readObject } from 'isomorphic-git';
