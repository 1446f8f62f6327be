/** Source maps: frames of compiled JavaScript read as their TypeScript (or other) source. */
export { SourceMapper, withMappedFrames } from './mapper';
