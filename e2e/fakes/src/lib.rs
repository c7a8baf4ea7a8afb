//! Contract fakes: test servers that stand in for vendor APIs no package registry can install.
//!
//! A fake speaks its vendor's documented wire protocol and refuses every request the real
//! service would refuse (missing or wrong auth, paths, query parameters, bodies), so a wrong
//! request fails the test instead of passing against a forgiving stub. Each vendor's fake is one
//! module here whose doc names the API reference it follows and says it is a fake; all of them
//! run on [`server::FakeServer`] (HTTPS on 127.0.0.1 with a throwaway CA, and a log of the
//! requests received). The provider tests and the e2e tests share these fakes.
//! [`fault_proxy`] and [`cut_proxy`] are no fakes: they break the road to a real provider or API
//! server on command.

pub mod akeyless;
pub mod azure_identity;
pub mod azure_keyvault;
pub mod azure_registry;
pub mod bitwarden;
pub mod conjur;
pub mod cut_proxy;
pub mod delinea;
pub mod doppler;
pub mod fault_proxy;
pub mod github;
pub mod gitlab;
pub mod google;
pub mod google_metadata;
pub mod google_sts;
pub mod ibm;
pub mod infisical;
pub mod keeper;
pub mod onepassword;
pub mod oracle;
pub mod oracle_identity;
pub mod secretserver;
pub mod server;
