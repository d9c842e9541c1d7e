// Package sshsig reads and writes SSH signatures in OpenSSH's SSHSIG format
// (PROTOCOL.sshsig), the format git puts in a commit's gpgsig header when
// gpg.format is ssh, and git's allowed-signers files (ssh-keygen(1),
// ALLOWED SIGNERS), which say which key may sign for which principal. It
// knows nothing of git objects or of rally's facts.
package sshsig
