// The release version, kept in step with package.json by the build (build/build.ts checks it).
export const STRAND_VERSION = "0.1.0";

// Replaced by the release build (`bun build --define STRAND_BUILD_COMMIT='"<commit>"'`, see
// build/build.ts) with the short git commit, `-dirty` when the tree had uncommitted changes, or
// "unknown" when git was unavailable. Undefined when running from source.
declare const STRAND_BUILD_COMMIT: string | undefined;

/** The commit this binary was built from, or "source" when running from source (`npm start`). */
export const STRAND_COMMIT: string = typeof STRAND_BUILD_COMMIT === "string" ? STRAND_BUILD_COMMIT : "source";
