// The interop matrix drivers' cell reporting (matrix-client-v1.mjs,
// matrix-client-v03.mjs): one JSON line per cell on stdout,
// {"op", "ok", "detail"} or {"op", "unsupported": reason}.
export const report = (op, ok, detail) => process.stdout.write(JSON.stringify({ op, ok: !!ok, detail }) + '\n');
export const unsupported = (op, why) => process.stdout.write(JSON.stringify({ op, unsupported: why }) + '\n');
export const assert = (c, m) => { if (!c) throw new Error(m); };
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// cell runs one cell: ok with what fn returns, or failed with what it threw.
export async function cell(op, fn) {
  try {
    report(op, true, await fn());
  } catch (e) {
    report(op, false, String(e?.stack ?? e));
  }
}
