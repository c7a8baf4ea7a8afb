# syntax=docker/dockerfile:1
# The operator image: one `external-secrets` binary (controller, `webhook` and `certcontroller`
# subcommands), built in release mode with the workspace's default features, on distroless.
# The binary links glibc and libgcc_s (ring and the Rust runtime), so the base is
# gcr.io/distroless/cc, which has them and the CA certificates the providers' TLS clients read,
# and nothing else. Builder and base share Debian 12, so the glibc the binary was linked against
# is the one it runs on.
ARG RUST_VERSION=1.95

FROM docker.io/library/rust:${RUST_VERSION}-bookworm AS build
WORKDIR /src
# The whole workspace: cargo reads every member's manifest even to build one binary.
COPY . .
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin external-secrets \
    && install -D target/release/external-secrets /out/external-secrets

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/external-secrets /usr/local/bin/external-secrets
# distroless's `nonroot` user; the Helm chart's securityContext may pick another UID.
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/external-secrets"]
