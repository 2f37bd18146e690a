// isomorphic-git's object reader, for the one thing baton does not read itself: deltified objects in
// pack files (objects.ts tries loose and whole packed objects first). A module of its own so that it
// is loaded only when such an object is needed, and so that the lean `baton fingerprint` bundle can
// load it lazily from the main bundle (scripts/build.mjs).
export { readObject } from 'isomorphic-git';
