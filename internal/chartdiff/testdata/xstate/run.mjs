// Runs statecharts in the real XState v5 for the chartdiff differential test.
//
// stdin:  {"cases": [{"machine": <config>, "guards": {"g0": true, ...},
//                     "actions": ["en_s1", "t0", ...], "sequences": [["e0", "e1"], ...]}]}
// stdout: {"results": [{"runs": [[<observation>, ...], ...]} | {"error": "..."}]}
//
// An observation is {"config": [...sorted active atomic paths...], "done": bool,
// "actions": [...]}: one after start, then one after each event. Every sequence runs on a
// fresh actor, on a simulated clock: a step "+N" lets N milliseconds pass, firing the
// delayed transitions (after) that fall due. A case that XState rejects or that fails while running reports an error and
// the other cases still run.
import { and, createActor, not, or, raise, setup, SimulatedClock, stateIn } from 'xstate';

// An eventless loop would otherwise hang the runner; the generated charts have none, so
// hitting the limit is reported as an error of that case.
const maxIterations = 10000;

function readStdin() {
  const chunks = [];
  return new Promise((resolve, reject) => {
    process.stdin.on('data', (c) => chunks.push(c));
    process.stdin.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    process.stdin.on('error', reject);
  });
}

// activePaths returns the sorted paths of the active atomic (and final) state nodes.
function activePaths(snapshot) {
  const paths = [];
  if (Array.isArray(snapshot._nodes)) {
    for (const node of snapshot._nodes) {
      if (node.type === 'atomic' || node.type === 'final') {
        paths.push(node.path.join('.'));
      }
    }
  } else {
    const walk = (value, prefix) => {
      if (typeof value === 'string') {
        paths.push(prefix.concat(value).join('.'));
        return;
      }
      for (const [key, sub] of Object.entries(value)) {
        if (typeof sub === 'string' || Object.keys(sub).length > 0) {
          walk(sub, prefix.concat(key));
        } else {
          paths.push(prefix.concat(key).join('.'));
        }
      }
    };
    walk(snapshot.value, []);
  }
  return paths.sort();
}

// withRaises returns the config with every action {"type": "xstate.raise", "event": ...}
// (how a config written as JSON raises an event) made into XState's raise action, which
// is not logged: fsmgen runs no hook for it.
function withRaises(value) {
  if (Array.isArray(value)) {
    return value.map(withRaises);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  if (value.type === 'xstate.raise') {
    return raise(value.event);
  }
  const out = {};
  for (const [key, sub] of Object.entries(value)) {
    out[key] = withRaises(sub);
  }
  return out;
}

// withGuards returns the config with every guard {"type": "xstate.and" | "xstate.or" |
// "xstate.not", "guards": [...]} and {"type": "xstate.stateIn", "stateValue": "#id"} (how a
// config written as JSON writes XState's higher-order guards, with the properties they
// carry) made into XState's and, or, not and stateIn.
function guardOf(g) {
  if (g === null || typeof g !== 'object') {
    return g;
  }
  switch (g.type) {
    case 'xstate.and':
      return and(g.guards.map(guardOf));
    case 'xstate.or':
      return or(g.guards.map(guardOf));
    case 'xstate.not':
      return not(guardOf(g.guards[0]));
    case 'xstate.stateIn':
      return stateIn(g.stateValue);
  }
  return g;
}

function withGuards(value) {
  if (Array.isArray(value)) {
    return value.map(withGuards);
  }
  if (value === null || typeof value !== 'object') {
    return value;
  }
  const out = {};
  for (const [key, sub] of Object.entries(value)) {
    out[key] = key === 'guard' ? guardOf(sub) : withGuards(sub);
  }
  return out;
}

function describe(err) {
  return err instanceof Error ? err.message : String(err);
}

function runCase(c) {
  const log = [];
  const guards = {};
  for (const [name, value] of Object.entries(c.guards || {})) {
    guards[name] = () => value;
  }
  const actions = {};
  for (const name of c.actions || []) {
    actions[name] = () => {
      log.push(name);
    };
  }
  const config = { ...withGuards(withRaises(c.machine)), options: { maxIterations } };
  const machine = setup({ guards, actions }).createMachine(config);

  const runs = [];
  for (const [si, seq] of c.sequences.entries()) {
    // Time is simulated: a step "+250" lets 250 milliseconds pass, timer by timer, so that
    // a state entered when a delay fires counts its own delays from that instant.
    const clock = new SimulatedClock();
    const wait = (ms) => {
      const end = clock.now() + ms;
      for (;;) {
        let next = Infinity;
        for (const t of clock.timeouts.values()) {
          next = Math.min(next, t.start + t.timeout);
        }
        if (next > end) {
          break;
        }
        clock.set(next);
      }
      clock.set(end);
    };
    const actor = createActor(machine, { clock });
    // Only an error observer: without one XState rethrows errors asynchronously, which
    // would take down the whole batch instead of reporting this case.
    let failure;
    actor.subscribe({ error: (err) => { failure ??= err; } });
    const observe = (step) => {
      const snapshot = actor.getSnapshot();
      if (failure !== undefined || snapshot.status === 'error') {
        const err = failure ?? snapshot.error;
        throw new Error(`sequence ${si} step ${step}: ${describe(err)}`);
      }
      const obs = {
        config: activePaths(snapshot),
        done: snapshot.status === 'done',
        actions: log.splice(0),
      };
      return obs;
    };
    log.length = 0;
    const obs = [];
    actor.start();
    obs.push(observe(0));
    for (const [i, type] of seq.entries()) {
      if (type.startsWith('+')) {
        wait(Number(type.slice(1)));
      } else {
        actor.send({ type });
      }
      obs.push(observe(i + 1));
    }
    actor.stop();
    log.length = 0;
    runs.push(obs);
  }
  return { runs };
}

const input = JSON.parse(await readStdin());
const results = input.cases.map((c) => {
  try {
    return runCase(c);
  } catch (err) {
    return { error: describe(err) };
  }
});
process.stdout.write(JSON.stringify({ results }));
