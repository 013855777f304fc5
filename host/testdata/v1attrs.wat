;; meta: -kind processor -name v1attrs -version 1.0.0 -description "an ABI 1 processor that imports the ABI 2 function token_attrs"
(module
  (import "realizar" "token_attrs" (func (param i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_processor"))
  (func (export "realizar_init") (param i32 i32 i32 i32) (result i64) (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_process") (param i32 i32) (result i32) (i32.const 0))
)
