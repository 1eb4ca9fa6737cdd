# RoCEv2 packet builder and parser (Ethernet/IPv4/UDP/BTH, ICRC).
-f rtl/common/common.f
rtl/pkt/tmnic_crc_acc.sv
rtl/pkt/tmnic_pkt_tx.sv
rtl/pkt/tmnic_pkt_rx_align.sv
rtl/pkt/tmnic_pkt_rx.sv
