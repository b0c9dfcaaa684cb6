//! vm-testkit: what stapvm's tests, fuzz targets and benches share, and
//! the product never links (`cargo tree -p stapvm` does not list it).
//!
//! - [`paths`]: where the shared corpus is, for a clone in any folder.
pub mod paths;
