//! vm-testkit: what stapvm's tests, fuzz targets and benches share, and
//! the product never links (`cargo tree -p stapvm` does not list it).
//!
//! - [`host`]: `HostSession`, the C VM core run in user space against a
//!   simulated [`HostEnv`], with one ring.
//! - [`gen`]: random verified programs and environments (seeded).
//! - [`layout`]: image-header offsets, for tests that break images.
//! - [`mutate`]: seeded mutations of valid images, for the verifier.
//! - [`diff`]: one case run on the C core and on the reference VM
//!   (vm-refvm), every observable compared.
//! - [`paths`]: where the shared corpus is, for a clone in any folder.
pub mod diff;
pub mod gen;
pub mod host;
pub mod layout;
pub mod mutate;
pub mod paths;

pub use vm_refvm::HostEnv;
