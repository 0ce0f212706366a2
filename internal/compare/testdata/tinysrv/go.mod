module tinysrv

go 1.22
