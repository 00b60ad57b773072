import { randomUUID } from 'node:crypto';
import { SandboxRuntime, CallBudget } from '@toolhost/sandbox';
const code = `export async function handle(input) { return input.title.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, ''); }`;
const tenantId = randomUUID(); const toolId = randomUUID();
async function main() {
  const rt = new SandboxRuntime({});
  const req = () => ({ tenantId, toolId, version: 1, code, input: { title: 'My Blog Post Title' }, secrets: {}, context: { invocationId: randomUUID() }, limits: { timeoutMs: 2000, memoryMb: 64, wallClockMs: 10000, maxInputBytes: 1e6, maxResultBytes: 1e6, maxLogBytes: 1e5 } });
  const bridge: any = { callTool: () => Promise.resolve(null), audit: () => Promise.resolve() };
  for (let i = 0; i < 500; i++) await rt.run(req() as any, bridge, new CallBudget(50));
  const iso: any = [...(rt as any).isolates.values()][0].isolate;
  for (let r = 0; r < 3; r++) {
    const n = 3000; const c0 = iso.cpuTime; const w0 = performance.now(); const u0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await rt.run(req() as any, bridge, new CallBudget(50));
    const wall = (performance.now() - w0) / n; const isoCpu = Number(iso.cpuTime - c0) / 1e6 / n; const u = process.cpuUsage(u0); const proc = (u.user + u.system) / 1000 / n;
    console.log(`wall ${wall.toFixed(3)} ms/call, isolate cpu ${isoCpu.toFixed(3)}, process cpu ${proc.toFixed(3)}`);
  }
  rt.dispose();
}
main().then(() => process.exit(0));
