declare module 'node-gyp-build' {
  /** Loads the prebuilt or locally built addon of the package at `root`. */
  function nodeGypBuild(root: string): unknown;
  export default nodeGypBuild;
}
