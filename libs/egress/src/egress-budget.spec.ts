import { EgressBudget } from './egress-budget';

const never = new AbortController().signal;

describe('EgressBudget', () => {
  it('grants exactly maxRequests and names what was spent', () => {
    const budget = new EgressBudget(2, 5);
    expect([budget.take(), budget.take(), budget.take()]).toEqual([null, null, '2 requests in this invocation']);
    expect(budget.taken).toBe(2);
  });

  it("a tool's budget within the tree's takes from both, and refuses at whichever is spent first", () => {
    const tree = new EgressBudget(3, 5);
    const first = tree.within({ maxRequests: 2 }, 'requests in this run of the tool');
    expect([first.take(), first.take(), first.take()]).toEqual([null, null, '2 requests in this run of the tool']);
    const second = tree.within({ maxRequests: 10 }, 'requests in this run of the tool');
    expect([second.take(), second.take()]).toEqual([null, '3 requests in this invocation']);
    expect(tree.taken).toBe(3);
    // A limit above the tree's is the tree's.
    expect(tree.within({ maxRequests: 100, maxConcurrent: 100 }, 'x')).toMatchObject({
      maxRequests: 3,
      maxConcurrent: 5,
    });
  });

  it('holds a slot of both; a waiter gets one in order as slots are released', async () => {
    const tree = new EgressBudget(50, 3);
    const tool = tree.within({ maxConcurrent: 1 }, 'x');
    const a = await tool.slot(never);
    let second = false;
    const waiting = tool.slot(never).then((release) => {
      second = true;
      return release;
    });
    // The tree still has room for another tool's requests.
    const other = await tree.slot(never);
    await Promise.resolve();
    expect(second).toBe(false);
    a();
    const b = await waiting;
    expect(second).toBe(true);
    b();
    other();
  });

  it("gives back the tool's slot when waiting for the tree's is aborted", async () => {
    const tree = new EgressBudget(50, 1);
    const tool = tree.within({ maxConcurrent: 1 }, 'x');
    const held = await tree.slot(never);
    const abort = new AbortController();
    const pending = tool.slot(abort.signal);
    abort.abort(new Error('gone'));
    await expect(pending).rejects.toThrow('gone');
    held();
    // Both slots are free again: the tool takes one at once.
    const again = await tool.slot(never);
    again();
  });
});
