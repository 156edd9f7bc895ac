// wink-bm25-text-search ships no types; the benchmark uses this much of it.
declare module 'wink-bm25-text-search' {
  interface WinkEngine {
    defineConfig(c: object): void;
    definePrepTasks(tasks: ((x: string) => string[])[]): void;
    addDoc(doc: object, id: string): void;
    consolidate(): void;
    search(q: string, limit: number): [string, number][];
  }
  export default function winkBm25(): WinkEngine;
}
