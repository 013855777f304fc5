;; meta: -abi 1 -kind drafter -name drafter1 -version 1.0.0 -description "a drafter declaring ABI 1 (the kind is ABI 2)"
(module
  (memory (export "memory") 1)
  (func (export "realizar_abi_v1_drafter"))
  (func (export "realizar_init") (param i32 i32 i32 i32) (result i64) (i64.const 1024))
  (func (export "realizar_reset") (param i64 i32) (result i32) (i32.const 0))
  (func (export "realizar_draft") (param i32 i32 i32 i32) (result i32) (i32.const 0))
)
