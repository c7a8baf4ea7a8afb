//! Serving certificates for tests of the HTTPS servers (webhook, secure metrics): two CAs,
//! each with a serving certificate for `localhost` valid until 9999 (generated once with
//! rcgen; test-only keys), and the file layout the servers read.

use std::path::Path;

/// The first CA.
pub const CA_A: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBhTCCASygAwIBAgIUCB/Hy2yMnHLKMZcmqR9/S0do+2MwCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBBMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAgMR4wHAYDVQQDDBVlMmUgd2ViaG9vayB0ZXN0\n\
IENBIEEwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQcH20y/fLB64gyJK4p5tSb\n\
96WGWpE3LryvIkWUwMr9IlP7GjvXz7QTUh3k2ZKulM01ni7eTZkF9vdUBWnR46pj\n\
o0IwQDAOBgNVHQ8BAf8EBAMCAoQwHQYDVR0OBBYEFIWM2ITvtHet4L+X50zxnopd\n\
fTfPMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDRwAwRAIgMJXaXVdsBf0X\n\
Xmh9RRFj/FNcPVZLwwcPbFI5vYSUzq4CIDxRVRORU4XWYdA7w0m8oWd0w4hbY5Zb\n\
PDNckPM2ImYg\n\
-----END CERTIFICATE-----\n\
";
/// `localhost`, issued by [`CA_A`].
pub const CERT_A: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBZDCCAQugAwIBAgIUArWU2wPJQZkKReoZ2n0FnmjXrCswCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBBMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcq\n\
hkjOPQIBBggqhkjOPQMBBwNCAARDohmDuty5XmiLcL1Yvhtv36dYXkNi8lQAsN0j\n\
iCFhOEDHT89iTbtHjRDc1O8wKkj/zadg/ggyInJgyF1DSgPUoy0wKzAUBgNVHREE\n\
DTALgglsb2NhbGhvc3QwEwYDVR0lBAwwCgYIKwYBBQUHAwEwCgYIKoZIzj0EAwID\n\
RwAwRAIgUwt9xAXKfSzoqCtBZpKtjOu5yyPjBEzyw6Tg2WfwVIwCIAlQrRu54PR3\n\
JJ6VEx2I520dntHQXAE+djbW70Cf458i\n\
-----END CERTIFICATE-----\n\
";
/// [`CERT_A`]'s key.
pub const KEY_A: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgp2zSsreR7kIaOiik\n\
arK3Qnx6vRLE43WMM2nZ+gGj5TuhRANCAARDohmDuty5XmiLcL1Yvhtv36dYXkNi\n\
8lQAsN0jiCFhOEDHT89iTbtHjRDc1O8wKkj/zadg/ggyInJgyF1DSgPU\n\
-----END PRIVATE KEY-----\n\
";
/// The second CA.
pub const CA_B: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBhjCCASygAwIBAgIUCeNvaoR+xOus62FOQie901cCeMQwCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBCMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAgMR4wHAYDVQQDDBVlMmUgd2ViaG9vayB0ZXN0\n\
IENBIEIwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAATQnN5zoYItNBRK9OxuMSum\n\
4zN3DAqsKmWRw2DJQUdXIkhd0QbstGKHESdcPS7R8ThjKZV8yxrRXZRuCuDHZYoA\n\
o0IwQDAOBgNVHQ8BAf8EBAMCAoQwHQYDVR0OBBYEFAqoAvLL1VetQCtl5u3crOYm\n\
0fEVMA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZIzj0EAwIDSAAwRQIgF0OAKCyiZhxl\n\
1dRNoLC+TW+rLBymvYJKeDLt4UcZ2GECIQDnoFFRwXqZzchkh+CB8vtdwkc44Urb\n\
fX5xdUrb1NCtqA==\n\
-----END CERTIFICATE-----\n\
";
/// `localhost`, issued by [`CA_B`].
pub const CERT_B: &str = "\
-----BEGIN CERTIFICATE-----\n\
MIIBZTCCAQugAwIBAgIUekijaPl1gdJaHVEoJMRsQ85NHTQwCgYIKoZIzj0EAwIw\n\
IDEeMBwGA1UEAwwVZTJlIHdlYmhvb2sgdGVzdCBDQSBCMCAXDTI1MDEwMTAwMDAw\n\
MFoYDzk5OTkxMjMxMDAwMDAwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcq\n\
hkjOPQIBBggqhkjOPQMBBwNCAARqP/4xAKIitdLYOALibxR7eG/lGc6aQhRGzxZL\n\
eKSTPz5d/VSlSr7O3al4/0ibaJmk1Oha+I+vMoT4QNrJa8xBoy0wKzAUBgNVHREE\n\
DTALgglsb2NhbGhvc3QwEwYDVR0lBAwwCgYIKwYBBQUHAwEwCgYIKoZIzj0EAwID\n\
SAAwRQIgJE/159QYzsz+btpNFuzCDNeDo2/IuR5Q9sUel9XgPaECIQCgbCQ75ZrD\n\
gme5vXsNzqQaDgNz168ZCJJ55QJ8BCI5PA==\n\
-----END CERTIFICATE-----\n\
";
/// [`CERT_B`]'s key.
pub const KEY_B: &str = "\
-----BEGIN PRIVATE KEY-----\n\
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg48t5LzDr/P7APWkT\n\
ztYJ1l+kszG4GlFW4+z9f7scFp+hRANCAARqP/4xAKIitdLYOALibxR7eG/lGc6a\n\
QhRGzxZLeKSTPz5d/VSlSr7O3al4/0ibaJmk1Oha+I+vMoT4QNrJa8xB\n\
-----END PRIVATE KEY-----\n\
";

/// Writes the files the webhook reads as a kubelet updates a Secret volume: each file
/// replaced atomically.
pub fn write_certificates(directory: &Path, ca: &str, cert: &str, key: &str) -> anyhow::Result<()> {
    for (name, content) in [("ca.crt", ca), ("tls.key", key), ("tls.crt", cert)] {
        let staged = directory.join(format!(".{name}.new"));
        std::fs::write(&staged, content)?;
        std::fs::rename(&staged, directory.join(name))?;
    }
    Ok(())
}
