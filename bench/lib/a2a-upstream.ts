/** An `@a2a-js/sdk` agent in its own process (bench/a2a.ts): prints its base URL, runs until killed. */
import { startTestAgent } from '../../test/support/a2a-agent.ts';

const agent = startTestAgent('Bench agent');
console.log(agent.url);
