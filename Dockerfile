# The API and the worker share one image; compose picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production SOCIAL_SEARCH_DIST=1
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY index-templates ./index-templates
RUN npm run build && npm prune --omit=dev
# The compiled build: no TypeScript loader at run time (~60 MiB less per process).
ENV SOCIAL_SEARCH_DIST=1
# The process settings bin/social-search gives long-running commands (why: there, and bench/memory.md,
# "Process memory settings"): glibc serves blocks of 128 KiB and more from mmap and keeps at most
# two arenas; V8's heap is sized from a 512 MiB limit with 8 MiB semi-spaces (the worker: 4).
ENV MALLOC_MMAP_THRESHOLD_=131072 MALLOC_ARENA_MAX=2
USER node
EXPOSE 8080
CMD ["node", "--max-old-space-size=512", "--max-semi-space-size=8", "bin/social-search.js", "serve"]
