/**
 * The environment server moved from env/ to learn/ (it needs agents' protocols); `ragtrail/env` still
 * re-exports it, so imports written before the move keep working and get the very same objects.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as env from '../../src/env/index.js';
import * as learn from '../../src/learn/index.js';

describe('ragtrail/env re-exports the server that lives in ragtrail/learn', () => {
  it('exports the same createEnvServer, withLoopbackEnvServer and EnvService', () => {
    for (const name of ['createEnvServer', 'withLoopbackEnvServer', 'EnvService'] as const) {
      assert.equal(typeof learn[name], 'function', `ragtrail/learn lacks ${name}`);
      assert.equal(env[name], learn[name], `ragtrail/env's ${name} is not ragtrail/learn's`);
    }
  });
});
