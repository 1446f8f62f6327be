// lib/tachyon/codec/model: version 2's model section (docs/format-v2.md §8): its shape and decoder, its encoder,
// the producer fields.
export { ModelSectionEncoder } from './encoder';
export {
  type ModelLabel,
  type ModelMeta,
  type ModelSampleType,
  type ModelSection,
  decodeModelSection,
} from './section';
