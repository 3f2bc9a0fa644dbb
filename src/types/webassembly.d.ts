/**
 * The slice of the WebAssembly JavaScript API that src/stats/draw-kernels.ts uses. Node has the
 * API as a global, but TypeScript declares it only in the DOM library, which this project does not
 * load (lib: ES2024, types: node). Shapes from the WebAssembly JS API spec
 * (https://webassembly.github.io/spec/js-api/).
 */
declare namespace WebAssembly {
  class Module {
    constructor(bytes: Uint8Array);
  }
  interface MemoryDescriptor {
    initial: number;
    maximum?: number;
  }
  class Memory {
    constructor(descriptor: MemoryDescriptor);
    readonly buffer: ArrayBuffer;
    grow(delta: number): number;
  }
  class Instance {
    constructor(module: Module, imports?: Record<string, Record<string, unknown>>);
    readonly exports: Record<string, unknown>;
  }
}
