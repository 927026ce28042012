// Usage: node count.js FILE.hlog
// Prints {"intervals":N,"corrected":C,"uncorrected":U,"first":F,"gap":G,"first_max_ms":M} as
// hdr-histogram-js reads the log (first and gap: a streamed run's tagged histograms).
"use strict";
const fs = require("fs");
const { HistogramLogReader } = require("hdr-histogram-js");
const reader = new HistogramLogReader(fs.readFileSync(process.argv[2], "utf8"));
const out = { intervals: 0, corrected: 0, uncorrected: 0, first: 0, gap: 0, first_max_ms: 0, start_time_sec: 0 };
for (let h; (h = reader.nextIntervalHistogram()) !== null; ) {
  out.intervals++;
  if (h.tag === "uncorrected") out.uncorrected += h.totalCount;
  else if (h.tag === "first") {
    out.first += h.totalCount;
    out.first_max_ms = Math.max(out.first_max_ms, h.maxValue / 1000);
  } else if (h.tag === "gap") out.gap += h.totalCount;
  else out.corrected += h.totalCount;
  if (!out.start_time_sec) out.start_time_sec = h.startTimeStampMsec / 1000;
}
console.log(JSON.stringify(out));
