// Types shared by the blocks of the tag-matching engine (tmnic_tm_engine and the blocks it is made
// of: tmnic_tm_commit, tmnic_tm_commit_fwd, tmnic_tm_tables).
//
// The enums are the same at every geometry. The engine's structs (request, class slot, link, ...)
// have fields as wide as its parameters make them (handle, SRQ, sequence number, ...), which a
// package cannot take, and Verilator 5.006 has no parameterized class types: tmnic_tm_engine declares
// them and passes them to its blocks as type parameters. The *_dflt_t structs here are the same
// structs at the engine's default parameters, used only as the blocks' defaults so that each block
// elaborates alone (scripts/lint.sh lints every module as top); every block checks at elaboration
// that the types it gets are as wide as its value parameters say.
package tmnic_tm_pkg;
  // A request moving through the pipeline. RK_FIND is a DEL's second pass (the entry's key).
  typedef enum logic [2:0] {RK_LK, RK_ADD, RK_DEL, RK_SYNC, RK_CLEAR, RK_FIND} rkind_e;
  // Where a live entry is: a class FIFO, the wildcard CAM, its SRQ's spill list.
  typedef enum logic [1:0] {LOC_CLS, LOC_CAM, LOC_SPILL} loc_e;

  // The commit's write words, chosen by tmnic_tm_commit and built by tmnic_tm_tables. *_UL: the
  // neighbours of the entry the commit unlinks (its prev record and link, captured earlier).
  typedef enum logic [1:0] {HS_LINK, HS_TUP, HS_NEW, HS_UL} hsrc_e;    // a written slot's head from
  typedef enum logic [1:0] {TS_TUP, TS_HDL, TS_UL} tsrc_e;             // ... and its tail from
  typedef enum logic [1:0] {LA_TAIL, LA_SPT, LA_ULP} lasrc_e;          // link write address
  typedef enum logic [1:0] {LD_NEW, LD_UL} ldsrc_e;                    // ... and data
  typedef enum logic [1:0] {PA_LNK, PA_HDL, PA_UL} pasrc_e;            // prev write address
  typedef enum logic [1:0] {PD_HEAD, PD_TAIL, PD_SPT, PD_UL} pdsrc_e;  // ... and data

  // ------------------------------------------------------------------ defaults (see above)
  // tmnic_tm_engine at its default parameters: N_ENTRIES 1024 (H_W 10), NUM_SRQ 16 (SRQ_W 4),
  // N_CLASS 2 (CLS_W 1), N_WAYS 4 (WAY_W 2), N_BUCKETS 512 (R_W 4 + 64 - 9 = 59), SEQ_W 62, GEN_W 2,
  // CAM_W 32 (CIW 5). Field for field the engine's types; the field comments are there.
  typedef struct packed {
    rkind_e      kind;
    logic [3:0]  srq;
    logic [9:0]  hdl;
    logic        cnt_vld;
    logic [15:0] cnt;
    logic        commit_miss;
    logic        has_cls;
    logic [0:0]  cls;
    logic [63:0] tag;
    logic [63:0] mask;
  } req_dflt_t;
  typedef struct packed {
    logic        v;
    logic [1:0]  gen;
    logic [58:0] kr;
    logic [9:0]  h1;
    logic [9:0]  tail;
    logic [61:0] s1;
  } slot_dflt_t;
  typedef struct packed {
    logic [9:0]  n1;
    logic [61:0] ns;
  } link_dflt_t;
  typedef struct packed {
    logic       hp;
    logic [9:0] p;
  } prev_dflt_t;
  typedef struct packed {
    logic       live;
    logic [1:0] gen;
    logic [3:0] srq;
    loc_e       loc;
    logic [0:0] cls;
    logic [4:0] cam;
  } live_dflt_t;
  typedef struct packed {
    logic [61:0] seq;
    logic [63:0] mtag;
    logic [63:0] mask;
  } ent_dflt_t;
  typedef struct packed {
    logic        v;
    logic [1:0]  way;
    logic [9:0]  h1;
    logic [9:0]  tail;
    logic [61:0] s1;
  } tup_dflt_t;
endpackage
