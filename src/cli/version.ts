// The release version, kept in step with package.json by the build (build/build.ts checks it).
export const STRAND_VERSION = "0.1.0";
