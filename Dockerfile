# The API and the worker share one image; compose picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production SOCIAL_SEARCH_DIST=1
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY workers ./workers
COPY index-templates ./index-templates
RUN npm run build && npm prune --omit=dev
# The compiled build: no TypeScript loader at run time (~60 MiB less per process).
ENV SOCIAL_SEARCH_DIST=1
# glibc returns large freed blocks (onnxruntime activations) to the OS: ~15–50 MiB less RSS (bench/README.md, "Embeddings").
ENV MALLOC_MMAP_THRESHOLD_=131072
USER node
EXPOSE 8080
CMD ["node", "bin/social-search.js", "serve"]
