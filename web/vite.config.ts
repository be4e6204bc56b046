// The web app's build: web/ -> surfaces/sidecar/app/ (committed; test/app/build.test.ts checks a
// rebuild gives the same bytes). No inline script or style, no module-preload polyfill, no source
// maps: the sidecar serves these files under a strict CSP.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir: process.env.SNOTRA_WEB_OUT ?? fileURLToPath(new URL('../surfaces/sidecar/app/', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
