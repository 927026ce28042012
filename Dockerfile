# A static apiperf image with nothing else in it (no base image to pull):
#   make image-context && docker build -t apiperf:latest image/
# (or podman/buildah). The binary is built outside, with CGO off, so it needs no libc;
# image-context copies the host's CA bundle so https targets can be verified.
FROM scratch
COPY apiperf /apiperf
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
USER 65534:65534
ENTRYPOINT ["/apiperf"]
