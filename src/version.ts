/** The version recorded in every run written by this build. Keep in step with package.json. */
export const STANDOFF_VERSION = '0.1.0';
