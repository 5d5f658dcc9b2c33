//! The process-wide SM limit (`set_num_sms`). Its own test binary: the limit is global, and the
//! plan tests (tests/plan.rs) running in parallel threads would otherwise see it change under them.

use mate::plan::{resolve_sms, set_num_sms};

#[test]
fn sm_count_resolution_order() {
    // call override, then process-wide limit, then the device; clamped to the device.
    assert_eq!(resolve_sms(None, 132), 132);
    assert_eq!(resolve_sms(Some(60), 132), 60);
    assert_eq!(resolve_sms(Some(500), 132), 132);
    set_num_sms(Some(48)).unwrap();
    assert_eq!(resolve_sms(None, 132), 48);
    assert_eq!(resolve_sms(Some(60), 132), 60);
    set_num_sms(None).unwrap();
    assert_eq!(resolve_sms(None, 132), 132);
    assert!(set_num_sms(Some(0)).is_err());
}
