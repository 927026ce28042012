# apiperf: build, test, demo and benchmark.
GO      ?= go
BIN     ?= ./apiperf
PKGS    := ./...

.PHONY: all build test vet unit timing e2e zoo zoo-idle zoo-busy demo bench bench-h2 fuzz clean image-context worker-efficiency k8s-e2e

all: build

# A static, pure-Go binary (no libc, the pure-Go DNS resolver): 1.3-1.7 MB less resident
# memory than the cgo build, since the dynamic loader and libc are not mapped (docs/PERFORMANCE.md).
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/apiperf

## test: what CI runs: vet, gofmt check, the tests with -race, the timing tests one package at a
## time without -race, an end-to-end run of the binary, and the verdict's zoo.
test: vet unit timing e2e zoo

vet:
	@fmt=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$fmt" ]; then echo "gofmt needed: $$fmt"; exit 1; fi
	$(GO) vet $(PKGS)

unit:
	$(GO) test -race -timeout 45m $(PKGS)

# Tests named TestTiming* assert latencies and rates; they skip in `unit` and run here alone,
# one package at a time; one that fails gets one more try, alone (scripts/timing.sh says why).
timing:
	GO=$(GO) ./scripts/timing.sh

e2e: build
	./scripts/e2e.sh $(BIN)

## zoo: the verdict on third-party services (verdict/zoo, a module of its own: gin, echo, chi, fiber,
## net/http; PostgreSQL, SQLite, Redis, pools, locks, leaks), each with one bottleneck, on an idle
## machine and again with a busy loop on one core (ZOO_BUSY=1). About 3 minutes each.
zoo: zoo-idle zoo-busy

zoo-idle:
	cd verdict/zoo && $(GO) vet ./... && $(GO) test -count=1 -timeout 20m .

zoo-busy:
	cd verdict/zoo && ZOO_BUSY=1 $(GO) test -count=1 -timeout 20m .

## demo: the newcomer's first command: a short sweep of the built-in target, ending with where its report is.
demo: build
	$(BIN) sweep

## bench: apiperf against its peers, side by side (see docs/PERFORMANCE.md): plain HTTP and HTTPS
## against wrk, open loop against wrk2, private memory against wrk (scripts/bench.sh), HTTP/2 against
## h2load (scripts/bench-h2.sh), then peak RSS against wrk and wrk2 (scripts/footprint.sh).
bench: build
	./scripts/bench.sh $(BIN)
	OUT=docs/PERFORMANCE.md ./scripts/bench-h2.sh $(BIN)
	OUT=docs/PERFORMANCE.md ./scripts/footprint.sh $(BIN)

## bench-h2: apiperf's HTTP/2 engine against h2load, side by side (the HTTP/2 section of docs/PERFORMANCE.md).
bench-h2: build
	OUT=docs/PERFORMANCE.md ./scripts/bench-h2.sh $(BIN)

## worker-efficiency: CPU per request of one scale-out worker against a plain run of the same share
## (median of interleaved reps, under the measurement lock; figures in docs/SCALEOUT.md).
worker-efficiency: build
	flock /tmp/apiperf-bench.lock ./scripts/worker-efficiency.sh $(BIN)

## k8s-e2e: scale-out on a real single-node Kubernetes built here (root; NOT part of `make test`):
## builds the cluster's components from Go modules into K8S_BUILD, checks `apiperf k8s` output
## (kubectl dry-runs, TLS, claim, NetworkPolicy), applies it for two 3-worker runs, reads their
## results from the claim and through `apiperf k8s fetch`, checks the Jobs' exit codes; the output
## is kept in docs/k8s-e2e.txt.
K8S_BUILD ?= /var/tmp/apiperf-k8s-e2e
k8s-e2e:
	K8S_BUILD=$(K8S_BUILD) bash -o pipefail -c './scripts/k8s-e2e.sh 2>&1 | tee docs/k8s-e2e.txt'

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzParser -fuzztime 30s ./load
	$(GO) test -run '^$$' -fuzz FuzzHistogramJSON -fuzztime 15s ./measure

## image-context: a static binary and the CA bundle in image/, for `docker build image/`
## (Dockerfile: FROM scratch; see docs/SCALEOUT.md for the Kubernetes manifests).
image-context:
	mkdir -p image
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o image/apiperf ./cmd/apiperf
	cp /etc/ssl/certs/ca-certificates.crt image/
	cp Dockerfile image/

clean:
	rm -rf $(BIN) apiperf-out image
