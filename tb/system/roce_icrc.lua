-- roce_icrc.lua: RoCEv2 (IPv4) ICRC checker for tshark, an implementation independent of the RTL's
-- (recipe: shared/reference/roce-wire.md section 5). A postdissector that adds
--   roce_icrc.calc    the ICRC computed over the frame, shown as the wire bytes read big-endian
--   roce_icrc.status  1 = Good (equals the 4 bytes before the end of the UDP payload), 0 = Bad
-- and an Error expert item on a bad ICRC. Frames that are not UDP to port 4791 get no status.
--
-- ICRC: CRC-32 (reflected 0xEDB88320, init ~0, final ~) over 8 bytes 0xFF (the absent LRH), the
-- IPv4 header with TOS, TTL and header checksum forced to 1s, the UDP header with its checksum
-- forced to 1s, and BTH..pad with BTH byte 4 (FECN/BECN/resv6a) forced to 1s; sent LSB first.
--
-- Usage: tshark -X lua_script:roce_icrc.lua -r capture.pcap -Y '...roce_icrc.status==1...'

local p = Proto("roce_icrc", "RoCEv2 ICRC check")
local f_calc = ProtoField.uint32("roce_icrc.calc", "Computed ICRC (as wire bytes, BE)", base.HEX)
local f_status = ProtoField.uint8("roce_icrc.status", "ICRC status", base.DEC, { [0] = "Bad", [1] = "Good" })
p.fields = { f_calc, f_status }
local e_bad = ProtoExpert.new("roce_icrc.bad", "Bad RoCEv2 ICRC", expert.group.CHECKSUM, expert.severity.ERROR)
local e_short = ProtoExpert.new("roce_icrc.short", "UDP length too short for BTH + ICRC or beyond the frame",
                                expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_bad, e_short }

local x_ip, x_udp, x_dport = Field.new("ip"), Field.new("udp"), Field.new("udp.dstport")

local T = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if bit32.band(c, 1) == 1 then c = bit32.bxor(bit32.rshift(c, 1), 0xEDB88320) else c = bit32.rshift(c, 1) end
  end
  T[i] = c
end
local function upd(crc, b) return bit32.bxor(T[bit32.band(bit32.bxor(crc, b), 0xff)], bit32.rshift(crc, 8)) end

local function bswap(v)
  return bit32.bor(bit32.lshift(bit32.band(v, 0xff), 24), bit32.lshift(bit32.band(bit32.rshift(v, 8), 0xff), 16),
                   bit32.lshift(bit32.band(bit32.rshift(v, 16), 0xff), 8), bit32.rshift(v, 24))
end

function p.dissector(tvb, pinfo, tree)
  local dp = x_dport()
  if not dp or dp.value ~= 4791 then return end
  local ip, udp = x_ip(), x_udp()
  if not ip or not udp then return end
  local ipo, ihl, uo = ip.offset, ip.len, udp.offset
  local ulen = tvb(uo + 4, 2):uint()
  if ulen < 8 + 12 + 4 or uo + ulen > tvb:len() then
    tree:add(p, tvb(uo, 8)):add_proto_expert_info(e_short)
    return
  end
  local crc = 0xffffffff
  for _ = 1, 8 do crc = upd(crc, 0xff) end                   -- masked LRH
  for i = 0, ihl - 1 do                                       -- IPv4 header: TOS, TTL, checksum
    local b = tvb(ipo + i, 1):uint()
    if i == 1 or i == 8 or i == 10 or i == 11 then b = 0xff end
    crc = upd(crc, b)
  end
  for i = 0, ulen - 5 do                                      -- UDP header + BTH..pad
    local b = tvb(uo + i, 1):uint()
    if i == 6 or i == 7 or i == 8 + 4 then b = 0xff end     -- UDP checksum, BTH byte 4
    crc = upd(crc, b)
  end
  crc = bit32.bnot(crc)
  local icrc = tvb(uo + ulen - 4, 4)
  local t = tree:add(p, icrc)
  t:add(f_calc, icrc, bswap(crc))
  local ok = (icrc:le_uint() == crc) and 1 or 0
  local st = t:add(f_status, icrc, ok)
  if ok == 0 then st:add_proto_expert_info(e_bad) end
end

register_postdissector(p)
