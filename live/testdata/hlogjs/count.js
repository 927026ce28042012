// Usage: node count.js FILE.hlog
// Prints {"intervals":N,"corrected":C,"uncorrected":U} as hdr-histogram-js reads the log.
"use strict";
const fs = require("fs");
const { HistogramLogReader } = require("hdr-histogram-js");
const reader = new HistogramLogReader(fs.readFileSync(process.argv[2], "utf8"));
const out = { intervals: 0, corrected: 0, uncorrected: 0, start_time_sec: 0 };
for (let h; (h = reader.nextIntervalHistogram()) !== null; ) {
  out.intervals++;
  if (h.tag === "uncorrected") out.uncorrected += h.totalCount;
  else out.corrected += h.totalCount;
  if (!out.start_time_sec) out.start_time_sec = h.startTimeStampMsec / 1000;
}
console.log(JSON.stringify(out));
