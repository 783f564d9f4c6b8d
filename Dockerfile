# syntax=docker/dockerfile:1
# The server as a container image (docs/deployment.md). The build stage installs every dependency
# and runs scripts/build-production.sh, the script CI proves without Docker
# (scripts/check-production.sh); the runtime stage holds only its result: dist/, the runtime
# dependencies and package.json, owned by root and run as the unprivileged `node` user.
#
#   docker build -t merchant-wallet-api .
#   docker run --init -p 8080:8080 -e DATABASE_URL=postgres://... -e ADMIN_TOKEN=... \
#     -e HOSTED_SCREEN_KEY=... merchant-wallet-api
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund \
 && sh scripts/build-production.sh /app

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    ADMIN_HOST=0.0.0.0 \
    DATA_DIR=/var/lib/merchant-wallet
WORKDIR /app
COPY --from=build /app /app
# The only place the server writes: demo credentials and, when their variables are unset, the
# generated operator token and hosted-screen key; the embedded database when DATABASE_URL is unset.
RUN mkdir -p /var/lib/merchant-wallet && chown node:node /var/lib/merchant-wallet
USER node
EXPOSE 8080 8081
# /readyz of the public listener; node, as the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1))"]
# Exec form: node is the process the runtime signals (PID 1 without --init); the server stops on
# SIGTERM by itself (drains, then exits 0).
CMD ["node", "--enable-source-maps", "dist/main.js"]
