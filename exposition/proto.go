package exposition

import (
	"encoding/binary"
	"math"
	"strings"
)

// ProtoContentType is the media type of the protobuf format: io.prometheus.client.MetricFamily
// messages, each preceded by its length as a varint. Prometheus asks for it (and only then
// ingests native histograms) when its native-histograms feature is on.
const ProtoContentType = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited"

// acceptsProto reports whether an Accept header asks for the delimited protobuf format.
func acceptsProto(accept string) bool {
	return strings.Contains(accept, "application/vnd.google.protobuf") &&
		strings.Contains(accept, "proto=io.prometheus.client.MetricFamily") &&
		strings.Contains(accept, "encoding=delimited")
}

// Field numbers and types of io.prometheus.client's metrics.proto (proto2): the few this
// package writes. Repeated scalars are written unpacked, proto2's default.
const (
	famName, famHelp, famType, famMetric = 1, 2, 3, 4

	metLabel, metGauge, metCounter, metSummary, metUntyped, metHistogram = 1, 2, 3, 4, 5, 7

	sumCount, sumSum, sumQuantile = 1, 2, 3

	histCount, histSum, histBucket, histSchema, histZeroThreshold, histZeroCount = 1, 2, 3, 5, 6, 7
	histPositiveSpan, histPositiveDelta                                          = 12, 13
	histExemplars                                                                = 16

	bucketCumulative, bucketUpper, bucketExemplar = 1, 2, 3
)

var metricTypes = map[string]uint64{"counter": 0, "gauge": 1, "summary": 2, "untyped": 3, "histogram": 4}

// protoFamily is the family being written in the protobuf format: it is encoded whole when
// the next family starts or the page is read.
type protoFamily struct {
	name, help, typ string
	metrics         [][]byte // encoded Metric messages
	// a summary's parts, gathered from its sample lines
	labels    []string
	quantiles [][2]float64
	sum       float64
	count     float64
}

func appendTag(b []byte, field, wire int) []byte {
	return binary.AppendUvarint(b, uint64(field)<<3|uint64(wire))
}

func appendVarint(b []byte, field int, v uint64) []byte {
	return binary.AppendUvarint(appendTag(b, field, 0), v)
}

func appendSint(b []byte, field int, v int64) []byte {
	return appendVarint(b, field, uint64(v<<1)^uint64(v>>63))
}

func appendDouble(b []byte, field int, v float64) []byte {
	return binary.LittleEndian.AppendUint64(appendTag(b, field, 1), math.Float64bits(v))
}

func appendBytes(b []byte, field int, v []byte) []byte {
	b = binary.AppendUvarint(appendTag(b, field, 2), uint64(len(v)))
	return append(b, v...)
}

func appendString(b []byte, field int, s string) []byte {
	b = binary.AppendUvarint(appendTag(b, field, 2), uint64(len(s)))
	return append(b, s...)
}

// appendLabels writes name, value pairs as LabelPair messages of a Metric.
func appendLabels(b []byte, labels []string) []byte {
	for i := 0; i+1 < len(labels); i += 2 {
		var lp []byte
		lp = appendString(lp, 1, labels[i])
		lp = appendString(lp, 2, labels[i+1])
		b = appendBytes(b, metLabel, lp)
	}
	return b
}

// sample adds one sample line's worth to the family being written.
func (f *protoFamily) sample(name string, v float64, labels []string) {
	if f.typ == "summary" {
		switch name {
		case f.name + "_sum":
			f.sum = v
		case f.name + "_count":
			f.count = v
		default:
			var rest []string
			q := math.NaN()
			for i := 0; i+1 < len(labels); i += 2 {
				if labels[i] == "quantile" {
					q = parseFloat(labels[i+1])
				} else {
					rest = append(rest, labels[i], labels[i+1])
				}
			}
			f.labels = rest
			f.quantiles = append(f.quantiles, [2]float64{q, v})
		}
		return
	}
	field := metUntyped
	switch f.typ {
	case "counter":
		field = metCounter
	case "gauge":
		field = metGauge
	}
	m := appendLabels(nil, labels)
	m = appendBytes(m, field, appendDouble(nil, 1, v))
	f.metrics = append(f.metrics, m)
}

// histogram adds a histogram metric: classic buckets, and the native buckets when kept.
func (f *protoFamily) histogram(h *Histogram) {
	// Fields may come in any order: the buckets first, then the count they add up to.
	var hb, bk []byte
	var cum uint64
	for i, bound := range h.Bounds {
		cum += h.Counts[i]
		bk = appendVarint(bk[:0], bucketCumulative, cum)
		bk = appendDouble(bk, bucketUpper, bound)
		if i < len(h.exemplars) && h.exemplars[i] != nil {
			bk = appendBytes(bk, bucketExemplar, h.exemplars[i].appendProto(nil))
		}
		hb = appendBytes(hb, histBucket, bk)
	}
	hb = appendVarint(hb, histCount, cum+h.Counts[len(h.Bounds)])
	hb = appendDouble(hb, histSum, h.Sum)
	if n := h.native; n != nil {
		hb = appendSint(hb, histSchema, int64(n.schema))
		hb = appendDouble(hb, histZeroThreshold, nativeZeroThreshold)
		hb = appendVarint(hb, histZeroCount, n.zero)
		spans, deltas := n.spans()
		for _, s := range spans {
			var sb []byte
			sb = appendSint(sb, 1, int64(s[0]))
			sb = appendVarint(sb, 2, uint64(s[1]))
			hb = appendBytes(hb, histPositiveSpan, sb)
		}
		for _, d := range deltas {
			hb = appendSint(hb, histPositiveDelta, d)
		}
		for _, e := range h.exemplars {
			if e != nil {
				hb = appendBytes(hb, histExemplars, e.appendProto(nil))
			}
		}
	}
	f.metrics = append(f.metrics, appendBytes(nil, metHistogram, hb))
}

// appendTo encodes the family as one length-delimited MetricFamily message.
func (f *protoFamily) appendTo(b []byte) []byte {
	if f.typ == "summary" {
		var s []byte
		s = appendVarint(s, sumCount, uint64(f.count))
		s = appendDouble(s, sumSum, f.sum)
		for _, q := range f.quantiles {
			var qb []byte
			qb = appendDouble(qb, 1, q[0])
			qb = appendDouble(qb, 2, q[1])
			s = appendBytes(s, sumQuantile, qb)
		}
		f.metrics = append(f.metrics, appendBytes(appendLabels(nil, f.labels), metSummary, s))
	}
	var m []byte
	m = appendString(m, famName, f.name)
	m = appendString(m, famHelp, f.help)
	m = appendVarint(m, famType, metricTypes[f.typ])
	for _, met := range f.metrics {
		m = appendBytes(m, famMetric, met)
	}
	b = binary.AppendUvarint(b, uint64(len(m)))
	return append(b, m...)
}
