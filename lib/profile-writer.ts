/**
 * ProfileWriter as the package exports it: lib/tachyon's, its heapSink() given lib/v8's frameFromV8 as the default
 * `frameOf` (a recording's V8 call frames as model frames). Handed over here, at the entry's level, so that
 * lib/tachyon imports none of lib/v8; the entry loads this module with ProfileWriter's first use.
 */
import { ProfileWriter, setDefaultHeapFrameOf } from './tachyon/index';
import { frameFromV8 } from './v8/index';

setDefaultHeapFrameOf(frameFromV8);

export { ProfileWriter };
