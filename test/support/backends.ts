/** The backends a test runs side by side: both where this run's backend is the native one, else the JS twin alone. */
import { backend } from '../../lib/backend';

export const testedBackends: ('native' | 'js')[] = backend.name === 'native' ? ['native', 'js'] : ['js'];
