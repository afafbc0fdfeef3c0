/**
 * Memory trace of a dynamic-provider process, preloaded through NODE_OPTIONS by
 * bench/provider-memory.ts (`--require bench/provider-memtrace.js`; does nothing in other processes).
 *
 * Every 20 ms it samples `process.memoryUsage()` and the count of gRPC calls in flight (the
 * provider's gRPC handlers are wrapped as the script registers them), and keeps the maxima. Each
 * time the calls in flight fall to zero and stay there for 300 ms ("settled": every step handed to
 * the provider so far is done), it forces two full collections and records the heap that is left,
 * and with PVA_MEMTRACE_SNAPSHOT=1 writes a heap snapshot then. Written (synchronously, so a killed
 * process leaves its last figures) to `$PVA_MEMTRACE_DIR/<pid>.json`.
 */
"use strict";
if (/dynamic-provider/.test(process.argv[1] ?? "") && process.env.PVA_MEMTRACE_DIR) {
  const fs = require("node:fs");
  const path = require("node:path");
  const v8 = require("node:v8");
  const vm = require("node:vm");
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc");
  const out = path.join(process.env.PVA_MEMTRACE_DIR, `${process.pid}.json`);
  const snapshot = process.env.PVA_MEMTRACE_SNAPSHOT === "1";
  const t0 = Date.now();
  const rec = {
    pid: process.pid,
    calls: {},
    inflightMax: 0,
    max: { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 },
    atMaxHeap: undefined,
    settled: [],
  };
  let inflight = 0;
  let settleTimer;
  const save = () => fs.writeFileSync(out, JSON.stringify(rec));
  const probeAt = Number(process.env.PVA_MEMTRACE_PROBE_MB ?? 0) * 1e6;
  let probed = false;
  const { PerformanceObserver } = require("node:perf_hooks");
  rec.gcs = {};
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind =
        { 1: "minor", 4: "major", 8: "incremental", 16: "weakcb" }[e.detail?.kind] ?? String(e.detail?.kind);
      rec.gcs[kind] = (rec.gcs[kind] ?? 0) + 1;
      if (kind === "major") {
        const h = process.memoryUsage().heapUsed;
        rec.maxAfterMajor = Math.max(rec.maxAfterMajor ?? 0, h);
      }
    }
  }).observe({ entryTypes: ["gc"] });
  const sample = () => {
    const m = process.memoryUsage();
    if (probeAt && !probed && m.heapUsed >= probeAt) {
      probed = true;
      gc();
      gc();
      const after = process.memoryUsage();
      rec.probe = {
        t: Date.now() - t0,
        inflight,
        heapUsedBefore: m.heapUsed,
        heapUsedAfterGc: after.heapUsed,
        rss: m.rss,
      };
      if (snapshot)
        rec.probe.snapshot = v8.writeHeapSnapshot(
          path.join(process.env.PVA_MEMTRACE_DIR, `${process.pid}-probe.heapsnapshot`),
        );
    }
    for (const k of Object.keys(rec.max)) rec.max[k] = Math.max(rec.max[k], m[k]);
    if (m.heapUsed >= rec.max.heapUsed) rec.atMaxHeap = { t: Date.now() - t0, inflight, ...m };
  };
  setInterval(() => {
    sample();
    save();
  }, 20).unref();
  const settle = () => {
    settleTimer = undefined;
    if (inflight > 0) return;
    sample();
    gc();
    gc();
    const m = process.memoryUsage();
    const h = v8.getHeapStatistics();
    const entry = {
      t: Date.now() - t0,
      calls: { ...rec.calls },
      heapUsedAfterGc: m.heapUsed,
      rssAfterGc: m.rss,
      externalAfterGc: m.external,
      totalHeapSize: h.total_heap_size,
    };
    if (snapshot)
      entry.snapshot = v8.writeHeapSnapshot(
        path.join(process.env.PVA_MEMTRACE_DIR, `${process.pid}-${rec.settled.length}.heapsnapshot`),
      );
    rec.settled.push(entry);
    save();
  };
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      rec.signal = sig;
      settle();
      allocations();
      process.exit(0);
    });
  }
  process.on("exit", (code) => {
    rec.exitCode = code;
    save();
  });
  // PVA_MEMTRACE_ALLOC=1: V8's sampling heap profiler over the whole process life (collected objects
  // included), summed by function at the end: where the allocations, garbage included, come from.
  let session;
  if (process.env.PVA_MEMTRACE_ALLOC === "1") {
    const inspector = require("node:inspector");
    session = new inspector.Session();
    session.connect();
    session.post("HeapProfiler.startSampling", {
      samplingInterval: 16384,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  }
  const allocations = () => {
    if (!session) return;
    session.post("HeapProfiler.stopSampling", (err, res) => {
      if (err) return;
      const byFn = new Map();
      const byPart = {};
      let total = 0;
      const walk = (node) => {
        const f = node.callFrame;
        const key = `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*node_modules\//, "").replace(/^.*\/dist\//, "dist/")}:${f.lineNumber + 1}`;
        byFn.set(key, (byFn.get(key) ?? 0) + node.selfSize);
        const u = f.url;
        const part = /\/dist\/|pulumi-voice-agent/.test(u)
          ? "pulumi-voice-agent"
          : (/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1] ??
            (u.startsWith("node:") ? "node" : "(built-ins)"));
        byPart[part] = (byPart[part] ?? 0) + node.selfSize;
        total += node.selfSize;
        for (const c of node.children) walk(c);
      };
      walk(res.profile.head);
      rec.allocated = { total, byPart, top: [...byFn.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40) };
    });
    session = undefined;
  };
  const grpc = require(require.resolve("@grpc/grpc-js", { paths: [path.dirname(process.argv[1])] }));
  const addService = grpc.Server.prototype.addService;
  grpc.Server.prototype.addService = function (service, impl) {
    const wrapped = Object.create(impl);
    const names = new Set();
    for (const [key, attrs] of Object.entries(service)) names.add(key).add(attrs.originalName);
    for (const name of names) {
      const fn = name && impl[name];
      if (typeof fn !== "function") continue;
      wrapped[name] = (call, callback) => {
        rec.calls[name] = (rec.calls[name] ?? 0) + 1;
        inflight++;
        rec.inflightMax = Math.max(rec.inflightMax, inflight);
        if (settleTimer) clearTimeout(settleTimer);
        settleTimer = undefined;
        return fn.call(impl, call, (...args) => {
          inflight--;
          if (inflight === 0 && ["create", "read", "update", "delete"].some((k) => rec.calls[k])) {
            settleTimer = setTimeout(settle, Number(process.env.PVA_MEMTRACE_SETTLE_MS ?? 300));
          }
          return callback(...args);
        });
      };
    }
    return addService.call(this, service, wrapped);
  };
}
