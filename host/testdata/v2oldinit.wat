;; meta: -abi 2 -kind sampler -name v2oldinit -version 1.0.0 -description "ABI 2 with v1's four-argument realizar_init"
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v2_sampler"))
  (func (export "realizar_init") (param i32 i32 i32 i32) (result i64) (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_sample") (param i32 i32) (result i32) (i32.const 0))
)
