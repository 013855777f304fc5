;; meta: -kind sampler -name importmem -version 1.0.0 -description "imports a memory"
(module
  (import "env" "mem" (memory 1))
  (export "memory" (memory 0))
  (func (export "realizar_abi_v1_sampler"))
  (func (export "realizar_init") (param i32 i32 i32 i32) (result i64) (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_sample") (param i32 i32) (result i32) (i32.const 0))
)
